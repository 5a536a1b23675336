#!/usr/bin/env bash
# Measures docs/deploy.md: publish overhead: 4 streams, --json to /dev/null, with and without --publish, interleaved.
set -u
# Inputs: four 60-frame 384x288 cuts of vtest.avi (opencv-doc):
mkdir -p /tmp/arch
for k in 0 1 2 3; do [ -f /tmp/arch/cam$k.y4m ] || ffmpeg -nostdin -hide_banner -loglevel error -y -ss $((k*8)) -i /usr/share/doc/opencv-doc/examples/data/vtest.avi -frames:v 60 -vf scale=384:288 -pix_fmt yuv420p /tmp/arch/cam$k.y4m; done
BIN=${BIN:-target/release/cortex-l2}   # cargo build --release -p cortex-runner --features "mqtt ffmpeg"
D=/tmp/mqb; rm -rf $D; mkdir -p $D; chmod 777 $D
printf "listener 18840 127.0.0.1\nallow_anonymous true\nlog_dest none\n" > $D/c.conf
mosquitto -c $D/c.conf & BPID=$!
sleep 0.5
mosquitto_sub -p 18840 -t 'bench/#' -q 1 > $D/sub.txt & SPID=$!
IN="-i /tmp/arch/cam0.y4m -i /tmp/arch/cam1.y4m -i /tmp/arch/cam2.y4m -i /tmp/arch/cam3.y4m"
for r in 1 2 3 4 5 6 7; do
  for mode in off on; do
    if [ $mode = on ]; then P="--publish mqtt://127.0.0.1:18840/bench"; else P=""; fi
    s=$(date +%s.%N)
    $BIN run --json $IN $P >/dev/null 2>$D/err.$mode.$r
    e=$(date +%s.%N)
    echo "$mode $r $(echo "$e - $s" | bc) $(grep -h 'streams on' $D/err.$mode.$r) | $(grep -h published $D/err.$mode.$r)"
  done
done
kill $SPID $BPID
wc -l $D/sub.txt
uptime
