#!/bin/bash
# Speculative decoding against plain generation, interleaved: each round runs
# every configuration once (greedy, 128 tokens) and prints one line per run:
# generation tok/s, acceptance, tokens per pass and a hash of the tokens
# (equal hashes = the same text). Expects in DIR (default /tmp/spec-bench),
# made as docs/benchmarks.md#speculative-decoding says: target-q4_0.gguf,
# draft4-q4_0.gguf, start.txt, repeat.txt; MEMVANTA=path of the binary.
cd "${DIR:-/tmp/spec-bench}" || exit 1
MV=${MEMVANTA:-memvanta}
T=target-q4_0.gguf; D=draft4-q4_0.gguf
N=${N:-128}
declare -a names=(plain-def draft-def draft-def-exact plain-rep ngram-rep ngram3-rep ngram3-rep-exact)
declare -a prompts=(start.txt start.txt start.txt repeat.txt repeat.txt repeat.txt repeat.txt)
declare -a extras=("" "-md $D" "-md $D --spec-exact" "" "--spec-type ngram-simple" "--spec-type ngram-simple --spec-ngram-size-n 3" "--spec-type ngram-simple --spec-ngram-size-n 3 --spec-exact")
for r in $(seq 1 ${ROUNDS:-2}); do
  for i in "${!names[@]}"; do
    nice -n 19 $MV generate -m $T -f ${prompts[$i]} -n $N --temp 0 ${extras[$i]} --json 2>/dev/null > out-${names[$i]}.json
    python3 -c "
import json; d=json.load(open('out-${names[$i]}.json')); s=d['stats']
print('round $r ${names[$i]}', 'tg %.2f tok/s'%(s['generated_tokens']/s['generation_seconds']), 'accept %s'%s.get('draft_accept_rate'), 'tok/pass %s'%s.get('tokens_per_pass'), 'hash', hash(tuple(d['tokens']))%100000)"
  done
done
