-- Holder counts per market, read from the maintained per-token counts (outcome_token.holders)
-- and, for holders of either side counted once, from token_holder (indexed by market).
create view market_holder_count as
select t.market_id,
       sum(t.holders) filter (where t.side = 'YES') as yes_holders,
       sum(t.holders) filter (where t.side = 'NO') as no_holders,
       (select count(distinct h.holder) from token_holder h where h.market_id = t.market_id) as holders
from outcome_token t
group by t.market_id;
