-- Knowledge base, schema version 8: per-component latency baselines.
--
-- Folding is incremental: kb_fold_state keeps, per aggregate, the end time up
-- to which activities have been folded in. An activity is folded once its end
-- lies more than settle_ns in the past (server clock), so that rows still in a
-- daemon's buffer when the fold runs are not skipped; rows that arrive later
-- than that are never folded (see knowledge-base/README.md).
CREATE TABLE kb_fold_state (
  name         text PRIMARY KEY,            -- 'baselines', 'capacity'
  watermark_ns bigint NOT NULL DEFAULT 0,   -- folded: end_ns <= watermark_ns
  settle_ns    bigint NOT NULL DEFAULT 15000000000,
  lookback_ns  bigint NOT NULL DEFAULT 3600000000000, -- longest activity folded
  folded       bigint NOT NULL DEFAULT 0,   -- activities folded so far
  updated_at   timestamptz NOT NULL DEFAULT now()
);
INSERT INTO kb_fold_state (name) VALUES ('baselines');

-- One baseline per component (node: hwid/swid/iid), activity type and size
-- class: floor(log2(io/bytes)) for activities with a byte count (0 for 0 or 1
-- byte), -1 for those without one.
CREATE TABLE kb_baselines (
  node_id    integer NOT NULL,
  type_id    integer NOT NULL,
  size_class smallint NOT NULL,
  n          bigint NOT NULL DEFAULT 0,
  sum_ns     double precision NOT NULL DEFAULT 0,
  min_ns     bigint NOT NULL DEFAULT 0,
  max_ns     bigint NOT NULL DEFAULT 0,
  -- per-byte model over the class: least squares latency = a + b * bytes
  sum_b      double precision NOT NULL DEFAULT 0,
  sum_bb     double precision NOT NULL DEFAULT 0,
  sum_bns    double precision NOT NULL DEFAULT 0,
  -- percentiles of the histogram below, refreshed at each fold
  p50_ns     double precision NOT NULL DEFAULT 0,
  p90_ns     double precision NOT NULL DEFAULT 0,
  p99_ns     double precision NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (node_id, type_id, size_class)
);

-- Latency histogram of a baseline, log buckets: bucket k holds latencies in
-- [2^(k/4), 2^((k+1)/4)) ns (quarter octaves, 19 % wide).
CREATE TABLE kb_baseline_hist (
  node_id    integer NOT NULL,
  type_id    integer NOT NULL,
  size_class smallint NOT NULL,
  bucket     smallint NOT NULL,
  count      bigint NOT NULL,
  PRIMARY KEY (node_id, type_id, size_class, bucket)
);

-- Quantile q (0..1) of a histogram given as its buckets in ascending order
-- and their counts: interpolated geometrically inside the bucket that holds
-- it. NULL for an empty histogram.
CREATE FUNCTION kb_hist_quantile(buckets smallint[], counts bigint[], q double precision)
RETURNS double precision LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  total double precision := 0;
  cum double precision := 0;
  target double precision;
  i integer;
BEGIN
  FOR i IN 1 .. coalesce(array_length(counts, 1), 0) LOOP
    total := total + greatest(counts[i], 0);
  END LOOP;
  IF total <= 0 THEN RETURN NULL; END IF;
  target := q * total;
  FOR i IN 1 .. array_length(counts, 1) LOOP
    CONTINUE WHEN counts[i] <= 0;
    IF cum + counts[i] >= target THEN
      RETURN 2 ^ ((buckets[i] + (target - cum) / counts[i]) / 4.0);
    END IF;
    cum := cum + counts[i];
  END LOOP;
  RETURN 2 ^ ((buckets[array_length(buckets, 1)] + 1) / 4.0);
END $$;

-- The bucket of a latency in ns (the inverse of the bucket edges above).
CREATE FUNCTION kb_hist_bucket(ns double precision) RETURNS smallint
LANGUAGE sql IMMUTABLE AS $$ SELECT floor(4 * ln(greatest(ns, 1)) / ln(2))::smallint $$;

-- Percentile rank (0..1) of latency ns in a histogram: the share of its mass
-- below ns, counting the bucket of ns in proportion to where ns lies in it.
CREATE FUNCTION kb_hist_rank(buckets smallint[], counts bigint[], ns double precision)
RETURNS double precision LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  total double precision := 0;
  below double precision := 0;
  pos double precision := 4 * ln(greatest(ns, 1)) / ln(2);
  i integer;
BEGIN
  FOR i IN 1 .. coalesce(array_length(counts, 1), 0) LOOP
    CONTINUE WHEN counts[i] <= 0;
    total := total + counts[i];
    IF buckets[i] + 1 <= pos THEN
      below := below + counts[i];
    ELSIF buckets[i] <= pos THEN
      below := below + counts[i] * (pos - buckets[i]);
    END IF;
  END LOOP;
  IF total <= 0 THEN RETURN NULL; END IF;
  RETURN below / total;
END $$;

-- Size class of a byte count (NULL: no count), as in kb_baselines.
CREATE FUNCTION kb_size_class(b bigint) RETURNS smallint
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN b IS NULL THEN -1 WHEN b <= 1 THEN 0
              ELSE 64 - position('1' IN b::bit(64)::text) END::smallint $$;

-- The per-byte model of each baseline: latency_ns = a_ns + b_ns_per_byte *
-- bytes, least squares over the class (NULL slope where the sizes in the
-- class do not vary), with the component's names for display.
CREATE VIEW kb_baseline_models AS
  SELECT s.node_id, s.type_id, s.size_class, n.hwid, n.swid, n.iid, t.name, s.n,
         s.sum_ns / s.n AS mean_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.min_ns, s.max_ns,
         CASE WHEN d.den > 0 THEN (s.sum_ns - (s.n * s.sum_bns - s.sum_b * s.sum_ns) / d.den * s.sum_b) / s.n END AS a_ns,
         CASE WHEN d.den > 0 THEN (s.n * s.sum_bns - s.sum_b * s.sum_ns) / d.den END AS b_ns_per_byte
    FROM kb_baselines s
    JOIN nodes n USING (node_id)
    JOIN activity_types t USING (type_id)
    CROSS JOIN LATERAL (SELECT s.n * s.sum_bb - s.sum_b * s.sum_b AS den) d
   WHERE s.n > 0;
