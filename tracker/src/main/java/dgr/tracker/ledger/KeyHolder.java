package dgr.tracker.ledger;

/** The owner of an API key: the key's id (never the key) and its tenant, whom fairness and usage count by. */
public record KeyHolder(String keyId, String tenant) {}
