-- The nodes each tracker has routed to (docs/tracker.md, "The token ledger"), written when one joins and
-- refreshed while it stays, never per request. After a kill -9 the restarted tracker asks every one of them
-- for its open rows, also those that have not joined it again yet (restarting themselves), and waits for a
-- node that does not answer before it settles what nobody knows.
CREATE TABLE ledger_nodes (
    tracker      VARCHAR(200)  NOT NULL,
    node_id      VARCHAR(200)  NOT NULL,
    url          VARCHAR(2000) NOT NULL,
    last_seen_ms BIGINT        NOT NULL,
    PRIMARY KEY (tracker, node_id)
);
