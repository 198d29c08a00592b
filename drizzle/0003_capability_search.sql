-- Full-text index for discovery (BM25 via FTS5). Kept in step with capabilities by the
-- capability service in the same transaction as each publish and edit.
CREATE VIRTUAL TABLE capability_search USING fts5(
  capability_id UNINDEXED,
  name,
  description,
  tags,
  category,
  tokenize = 'porter unicode61'
);
