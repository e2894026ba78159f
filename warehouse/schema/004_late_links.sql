-- SIOX warehouse, schema version 4: links the matcher could not make at once.
--
-- A send or receive record can reach the server a batch earlier than its
-- activity row (the client writes the activity when it ends). The matcher
-- parks such remote calls as "waiting" and gives them a fresh rc_id once
-- their activity has arrived, so that they are matched as if new.
ALTER TABLE remote_calls ADD COLUMN waiting boolean NOT NULL DEFAULT false;
CREATE INDEX remote_calls_waiting ON remote_calls (rc_id) WHERE waiting;

-- Implicit-link flags: '' (R inside S's interval), 'before-parent' (R began
-- before S: read-ahead) and 'after-parent' (R outlived S: write-behind,
-- asynchronous aggregation). The last two always come with confidence <= 0.2.
ALTER TABLE causal_links ADD CONSTRAINT causal_links_flags
  CHECK (flags IN ('', 'before-parent', 'after-parent'));
