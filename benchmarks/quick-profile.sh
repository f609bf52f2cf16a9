#!/usr/bin/env bash
# Quick profile of every benchmark (under 10 minutes on 2 cores). From the repository root:
#   mvn -B -q -DskipTests package -pl benchmarks -am && bash benchmarks/quick-profile.sh
# Output: benchmarks/target/quick/ (JMH JSON and text, Markdown of the runners, fairness CSV and PNG).
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=benchmarks/target/benchmarks.jar
OUT=benchmarks/target/quick
[ -f "$JAR" ] || { echo "build first: mvn -B -q -DskipTests package -pl benchmarks -am" >&2; exit 1; }
mkdir -p "$OUT"
{ date -u; java -version 2>&1 | head -1; echo "nproc=$(nproc)"; uptime; } > "$OUT/environment.txt"
start=$(date +%s)
echo "== JMH (all benchmarks, all peers, quick settings)" >&2
java -jar "$JAR" 'io.reactoractor.benchmarks' -f 1 -wi 1 -w 500ms -i 3 -r 500ms \
    -rf json -rff "$OUT/jmh.json" | tee "$OUT/jmh.txt" | grep -E '^(Benchmark|[A-Za-z].*(thrpt|avgt|ss))' >&2 || true
echo "== fairness suite" >&2
java -cp "$JAR" io.reactoractor.benchmarks.fairness.FairnessRunner --quick --csv="$OUT/fairness" --png="$OUT/fairness" \
    > "$OUT/fairness.md"
echo "== Savina-style workloads vs Pekko" >&2
java -cp "$JAR" io.reactoractor.benchmarks.savina.SavinaRunner --quick > "$OUT/savina.md"
echo "== pull consumer" >&2
java -cp "$JAR" io.reactoractor.benchmarks.pull.PullBenchmark --quick > "$OUT/pull.md"
echo "quick profile done in $(( $(date +%s) - start )) s; results in $OUT" >&2
