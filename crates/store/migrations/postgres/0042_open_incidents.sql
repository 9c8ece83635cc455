-- A page's open incidents, which its public snapshot reads on every
-- rebuild: found without reading the rest of the page's incidents (with
-- 100,000 past ones, that read was most of a rebuild; docs/performance.md).
CREATE INDEX incidents_open ON incidents(page_id, created_at) WHERE status <> 'resolved';
