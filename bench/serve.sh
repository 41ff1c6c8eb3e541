# Sourced by the bench scripts that run against the reference service: starts it and reads
# what it and its neighbours say, and what the options given to conform say. Expects `bin` (the conform binary) and a `pids` array whose
# processes the caller kills on exit.

# said FILE PREFIX: what follows PREFIX in FILE once the program writing it has said it
said() {
  local text
  for _ in $(seq 100); do
    text=$(sed -n "s/^$2//p" "$1" | head -1)
    [ -n "$text" ] && { echo "$text"; return; }
    sleep 0.05
  done
  echo "$1: nothing said" >&2
  cat "$1" >&2
  exit 1
}

# option NAME DEFAULT [CONFORM OPTIONS...]: the value the options give NAME (`--NAME V` or
# `--NAME=V`), else DEFAULT
option() {
  local name=$1 value=$2 prev=
  shift 2
  for arg in "$@"; do
    [ "$prev" = "--$name" ] && value=$arg
    case $arg in "--$name="*) value=${arg#*=} ;; esac
    prev=$arg
  done
  echo "$value"
}

# serve_reference DIR [SERVE OPTIONS...]: starts `conform serve --port 0` with the options,
# its banner in DIR/serve.txt, its pid added to `pids`; sets `url` to the service's root.
serve_reference() {
  local dir=$1
  shift
  "$bin" serve --port 0 "$@" >"$dir/serve.txt" 2>&1 &
  pids+=($!)
  url=$(said "$dir/serve.txt" 'reference service at ')
}
