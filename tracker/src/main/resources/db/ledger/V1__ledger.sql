-- The token ledger (docs/tracker.md, "The token ledger"). One file for SQLite and PostgreSQL: only
-- types both read the same way (VARCHAR, BIGINT, INTEGER, TEXT); times are epoch milliseconds.

-- API keys: the SHA-256 of the key, never the key. A key's budget counts prompt + completion tokens;
-- reserved_tokens are held by requests in flight, spent_tokens by settled ones, and the reserve is one
-- conditional UPDATE so that spent + reserved never passes budget, whatever runs concurrently.
CREATE TABLE api_keys (
    key_id          VARCHAR(32)  NOT NULL PRIMARY KEY,
    key_sha256      VARCHAR(64)  NOT NULL,
    tenant          VARCHAR(200) NOT NULL,
    budget_tokens   BIGINT,
    reserved_tokens BIGINT       NOT NULL DEFAULT 0,
    spent_tokens    BIGINT       NOT NULL DEFAULT 0,
    created_ms      BIGINT       NOT NULL,
    revoked_ms      BIGINT
);

-- One row per request, keyed by request id (the idempotency key). state is 'open' from the reservation
-- until the settlement writes the node's exact accounting ('settled'); tracker names the tracker that took
-- it, so a restarted tracker recovers its own open rows and never another's in flight.
CREATE TABLE requests (
    request_id        VARCHAR(200) NOT NULL PRIMARY KEY,
    key_id            VARCHAR(32),
    tenant            VARCHAR(200) NOT NULL,
    model             VARCHAR(200) NOT NULL,
    body_sha256       VARCHAR(64)  NOT NULL,
    state             VARCHAR(8)   NOT NULL,
    tracker           VARCHAR(200) NOT NULL,
    reserved_tokens   BIGINT       NOT NULL,
    recipe_id         VARCHAR(200),
    nodes             VARCHAR(2000),
    prompt_tokens     BIGINT,
    cached_tokens     BIGINT,
    generated_tokens  BIGINT,
    delivered_tokens  BIGINT,
    recomputed_tokens BIGINT,
    outcome           VARCHAR(16),
    http_status       INTEGER,
    result_json       TEXT,
    arrival_ms        BIGINT       NOT NULL,
    first_token_ms    BIGINT,
    end_ms            BIGINT
);

CREATE INDEX requests_by_tenant_arrival ON requests (tenant, arrival_ms);
CREATE INDEX requests_by_state ON requests (state, tracker);
