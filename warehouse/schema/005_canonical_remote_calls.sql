-- SIOX warehouse, schema version 5: remote calls under merged-away objects.
--
-- Before this version a SEND or RECEIVE that preceded a MAP in the same batch
-- was stored under its pre-merge object, so the matcher (which compares
-- object ids) never paired it. Move such rows to the root (objects are
-- flattened: merged_into is the root) and give them a fresh rc_id so that
-- the next matcher pass examines them and the receives near them again.
UPDATE remote_calls r SET object_id = o.merged_into, rc_id = nextval('remote_calls_rc_id_seq')
  FROM objects o WHERE o.object_id = r.object_id AND o.merged_into IS NOT NULL;
