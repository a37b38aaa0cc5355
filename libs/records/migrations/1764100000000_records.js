/**
 * The records tables, each hash-partitioned 16 ways by its key (PARTITION BY HASH): a partition of a
 * 10⁹-row table holds ~6·10⁷ rows, its index stays a size a vacuum or a reindex gets through, and
 * partitions can later move to other nodes (Citus distributes a table on the same key). Each table has
 * its primary key as its only index: every query reads by it.
 */
const PARTITIONS = 16;

const TABLES = {
  pages: {
    key: 'url',
    columns: {
      url: { type: 'text', notNull: true },
      fetched_at: { type: 'timestamptz', notNull: true },
      status: { type: 'smallint', notNull: true },
      content_key: { type: 'text', notNull: true },
      content_hash: { type: 'text', notNull: true },
      simhash: { type: 'text' },
      etag: { type: 'text' },
      last_modified: { type: 'text' },
      changes: { type: 'integer', notNull: true, default: 0 },
      changed_at: { type: 'timestamptz', notNull: true },
    },
  },
  content_owners: {
    key: 'content_hash',
    columns: {
      content_hash: { type: 'text', notNull: true },
      url: { type: 'text', notNull: true },
    },
  },
  duplicates: {
    key: 'url',
    columns: {
      url: { type: 'text', notNull: true },
      kind: { type: 'text', notNull: true, check: "kind IN ('exact', 'near')" },
      original: { type: 'text', notNull: true },
      distance: { type: 'smallint' },
    },
  },
  captures: {
    key: 'content_hash',
    columns: {
      content_hash: { type: 'text', notNull: true },
      url: { type: 'text', notNull: true },
      warc_date: { type: 'text', notNull: true },
      digest: { type: 'text', notNull: true },
      record_id: { type: 'text', notNull: true },
    },
  },
};

exports.up = (pgm) => {
  for (const [table, { key, columns }] of Object.entries(TABLES)) {
    pgm.createTable(table, columns, { constraints: { primaryKey: key }, partition: { strategy: 'HASH', columns: key } });
    for (let remainder = 0; remainder < PARTITIONS; remainder++) {
      pgm.sql(`CREATE TABLE ${table}_p${remainder} PARTITION OF ${table} FOR VALUES WITH (MODULUS ${PARTITIONS}, REMAINDER ${remainder})`);
    }
  }
};

exports.down = (pgm) => {
  for (const table of Object.keys(TABLES).reverse()) pgm.dropTable(table, { cascade: true });
};
