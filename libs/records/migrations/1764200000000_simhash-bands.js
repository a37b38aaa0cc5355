/**
 * The near-duplicate index (content-seen's simhashes), hash-partitioned 16 ways by bucket like the other
 * records tables. A simhash is filed under each of its band values: one row per band, (band, value) → simhash
 * and its owner (a content hash). The primary key (band, value, simhash) is the only index: a lookup reads its
 * d + 1 buckets by its prefix, and a claim is `INSERT … ON CONFLICT DO NOTHING` on it. `band` names the
 * layout too (bands × 16 + band), so each distance is an index of its own (libs/records/src/simhash-bands.ts).
 * The owner is kept in every band's row, so a lookup is one statement (≈ 4 × 110 B a page on disk at 4 bands).
 */
const PARTITIONS = 16;

exports.up = (pgm) => {
  pgm.createTable(
    'simhash_bands',
    {
      band: { type: 'smallint', notNull: true },
      value: { type: 'integer', notNull: true },
      simhash: { type: 'bigint', notNull: true },
      owner: { type: 'text', notNull: true },
    },
    { constraints: { primaryKey: ['band', 'value', 'simhash'] }, partition: { strategy: 'HASH', columns: ['band', 'value'] } },
  );
  for (let remainder = 0; remainder < PARTITIONS; remainder++) {
    pgm.sql(`CREATE TABLE simhash_bands_p${remainder} PARTITION OF simhash_bands FOR VALUES WITH (MODULUS ${PARTITIONS}, REMAINDER ${remainder})`);
  }
};

exports.down = (pgm) => {
  pgm.dropTable('simhash_bands', { cascade: true });
};
