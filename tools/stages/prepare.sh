# prepare.sh: sourced by measure.sh and failover.sh (needs ROOT, DGR, MODEL and WORK set). Makes the model when
# missing, then points DGR at a copy of the build (the distribution's layout), so an edit of the checkout during
# a run cannot rebuild the jars under the running processes; defines port (a free 127.0.0.1 port).
if [ ! -f "$MODEL" ]; then
  mkdir -p "$(dirname "$MODEL")"
  "$DGR" synth --preset llama-1b --quant Q4_0 -o "$MODEL" >/dev/null
fi
"$DGR" --version >/dev/null   # builds once if the sources changed
mkdir -p "$WORK/dist/bin" "$WORK/dist/lib"
cp "$ROOT/cli/src/dist/bin/dgr" "$WORK/dist/bin/dgr"
cp "$ROOT/cli/target/dgr-cli.jar" "$ROOT"/cli/target/lib/*.jar "$WORK/dist/lib/"
DGR="$WORK/dist/bin/dgr"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
