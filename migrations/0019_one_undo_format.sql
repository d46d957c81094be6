-- One undo format for every mutable table (issue 21): the first slice's tables (market, position,
-- user_stats, protocol_stats) are now written, imaged and reverted through their descriptors in
-- pipeline/tables.ts like every later table. Their undo entries written before this migration
-- have the old format (row_key: the reducer's key text, "5" or "0xuser:5"; image: the reducer's
-- row object, camelCase fields) and are rewritten here into the descriptor format, so a reorg
-- across the upgrade restores them exactly:
-- - row_key: the key columns as JSON, in key order, exactly as `JSON.stringify` writes them
--   (`keyImageOf` in pipeline/rows-sink.ts). The text must match byte for byte: a revert picks
--   the first image per row_key, so a row with two spellings of its key would be restored twice;
-- - image: the row by column name (the values are already the descriptor encodings: numerics as
--   decimal strings, bigint columns as JSON numbers, booleans and nulls as themselves).

-- In each image the camelCase keys become snake_case column names (a null image stays null).
update undo_log
   set row_key = '{"id":' || to_json(row_key)::text || '}',
       image = (select jsonb_object_agg(lower(regexp_replace(key, '([A-Z])', '_\1', 'g')), value) from jsonb_each(image))
 where table_name = 'market' and row_key not like '{%';

update undo_log
   set row_key = '{"user_address":' || to_json(split_part(row_key, ':', 1))::text || ',"market_id":' || to_json(split_part(row_key, ':', 2))::text || '}',
       image = ((select jsonb_object_agg(lower(regexp_replace(key, '([A-Z])', '_\1', 'g')), value) from jsonb_each(image)) - 'user')
               || jsonb_build_object('user_address', image->'user')
 where table_name = 'position' and row_key not like '{%';

update undo_log
   set row_key = '{"address":' || to_json(row_key)::text || '}',
       image = (select jsonb_object_agg(lower(regexp_replace(key, '([A-Z])', '_\1', 'g')), value) from jsonb_each(image))
 where table_name = 'user_stats' and row_key not like '{%';

update undo_log
   set row_key = '{"id":1}',
       image = (select jsonb_object_agg(lower(regexp_replace(key, '([A-Z])', '_\1', 'g')), value) from jsonb_each(image)) || '{"id": 1}'::jsonb
 where table_name = 'protocol_stats' and row_key not like '{%';
