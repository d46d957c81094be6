-- Which deployment this database indexes. One database holds one deployment's index: a start
-- against another deployment (another diamond or deploy block) is refused rather than mixing
-- two chains' rows.
CREATE TABLE indexed_deployment (
  chain_id      integer PRIMARY KEY,
  diamond       text    NOT NULL,
  deploy_block  bigint  NOT NULL,
  source        text    NOT NULL,
  first_indexed timestamptz NOT NULL DEFAULT now()
);
