#!/usr/bin/env bash
# Measures docs/deploy.md: 4 live cameras (ffmpeg serving vtest over HTTP at 25 fps), results to mosquitto;
# the broker is stopped for 3 s, then camera 2's server for 3 s.
set -u
BIN=${BIN:-target/release/cortex-l2}   # cargo build --release -p cortex-runner --features "mqtt ffmpeg"
D=/tmp/outage; rm -rf $D; mkdir -p $D; chmod 777 $D
ffmpeg -hide_banner -loglevel error -y -i /usr/share/doc/opencv-doc/examples/data/vtest.avi -vf fps=25,scale=384:288 -t 40 -c:v mpeg2video -q:v 4 -g 25 -f mpegts $D/live.ts
printf "listener 18850 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location $D/\nmax_queued_messages 0\nlog_dest none\n" > $D/c.conf
TS='import sys,time
for l in sys.stdin:
    print(f"{time.time():.3f} {l}", end="", flush=True)'
serve() { ffmpeg -nostdin -hide_banner -loglevel error -re -i $D/live.ts -c copy -f mpegts -listen 1 http://127.0.0.1:$1/s.ts >/dev/null 2>>$D/ffmpeg.log & echo $!; }
mosquitto -c $D/c.conf & BPID=$!
sleep 0.5
mosquitto_sub -p 18850 -t 'site/+/results' -q 1 -c -i meas -F '%U %t %p' > $D/sub.txt & SUBPID=$!
declare -a S
for k in 0 1 2 3; do S[$k]=$(serve $((18860+k))); done
sleep 0.3
t0=$(date +%s.%N)
$BIN run --json -i http://127.0.0.1:18860/s.ts -i http://127.0.0.1:18861/s.ts -i http://127.0.0.1:18862/s.ts -i http://127.0.0.1:18863/s.ts \
  --reconnect interval=0.2,max-interval=1 --read-timeout 3 --frames 600 \
  --publish mqtt://127.0.0.1:18850/site --publish-queue 100 2>$D/err.txt | python3 -u -c "$TS" > $D/out.txt &
RPID=$!
sleep 6; kill -TERM $BPID; wait $BPID; echo "broker stopped $(date +%s.%N)" > $D/events.txt
sleep 3; mosquitto -c $D/c.conf & BPID=$!; echo "broker started $(date +%s.%N)" >> $D/events.txt
sleep 4; kill -KILL ${S[2]}; echo "cam2 killed $(date +%s.%N)" >> $D/events.txt
sleep 3; S[2]=$(serve 18862); echo "cam2 started $(date +%s.%N)" >> $D/events.txt
wait $RPID
sleep 2
for k in 0 1 2 3; do kill ${S[$k]} 2>/dev/null; done
kill $BPID $SUBPID
cat $D/events.txt; cat $D/err.txt; wc -l $D/out.txt $D/sub.txt; uptime
# What the outage cost, from the timestamped lines.
D=$D python3 - <<'PY'
import json, os
d = os.environ["D"]
ev = {}
for l in open(f"{d}/events.txt"):
    *k, t = l.split(); ev[" ".join(k)] = float(t)
rows = [(float(t), json.loads(j)) for t, j in (l.split(" ", 1) for l in open(f"{d}/out.txt"))]
cam = [(t, r) for t, r in rows if r["stream"] == 2]
gap = [(t, r) for t, r in cam if "missed_before" in r]
print("camera 2: frame", gap[0][1]["frame"], "missed_before", gap[0][1]["missed_before"],
      "; first frame %.3f s after its server was back" % (gap[0][0] - ev["cam2 started"]))
sub = [(float(t), json.loads(p)) for t, _, p in (l.split(" ", 2) for l in open(f"{d}/sub.txt"))]
keys = [(r["stream"], r["frame"]) for _, r in sub]
print("subscriber: %d messages, %d frames" % (len(keys), len(set(keys))))
print("first message %.3f s after the broker was back" % (min(t for t, _ in sub if t > ev["broker started"]) - ev["broker started"]))
print("frames printed while the broker was away:", sum(1 for t, _ in rows if ev["broker stopped"] <= t <= ev["broker started"]))
PY
