-- Who hears of a change is who was subscribed when it committed: the
-- highest outbox id committed when the subscriber became verified. Writers
-- take turns, so every change committed later has a higher id; the fan-out
-- (which runs after the commit, maybe much later) tells only subscribers
-- whose `joined_after` is below the change's outbox id. NULL (subscribed
-- before this column existed) hears of everything, as before.
ALTER TABLE subscribers ADD COLUMN joined_after BIGINT;
