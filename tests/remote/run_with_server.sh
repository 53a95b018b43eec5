#!/bin/sh
# Runs an unmodified OpenCL program against a troupe-deviced of its own:
#   run_with_server.sh DEVICED ICD_FILE [--need PATH MESSAGE] [--expect TEXT] -- COMMAND...
# starts DEVICED on a free port, points the ICD loader at ICD_FILE only (OCL_ICD_VENDORS) and at
# the server (TROUPE_ICD_HOSTS), runs COMMAND, stops the server and exits with COMMAND's status.
# --need: exit 77 (skipped) with MESSAGE when PATH does not exist.
# --expect: COMMAND's output must also contain TEXT.
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 DEVICED ICD_FILE [--need PATH MESSAGE] [--expect TEXT] -- COMMAND..." >&2
  exit 2
fi
deviced=$1
icd=$2
shift 2
expect=""
while [ $# -gt 0 ]; do
  case $1 in
    --need)
      if [ ! -e "$2" ]; then
        echo "$3"
        exit 77
      fi
      shift 3 ;;
    --expect) expect=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "$0: unknown option $1" >&2; exit 2 ;;
  esac
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/troupe-run-XXXXXX") || exit 1
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

"$deviced" --port 0 >"$dir/server.out" &
server=$!
# The server's first line: "troupe-deviced: listening on 127.0.0.1:PORT".
port=""
tries=0
while [ -z "$port" ] && [ $tries -lt 300 ]; do
  line=$(head -n 1 "$dir/server.out")
  case $line in
    *"listening on "*) port=${line##*:} ;;
    *)
      kill -0 "$server" 2>/dev/null || break
      sleep 0.1
      tries=$((tries + 1)) ;;
  esac
done
if [ -z "$port" ]; then
  echo "$0: troupe-deviced did not report its port" >&2
  exit 1
fi
echo "$0: troupe-deviced listens on 127.0.0.1:$port"

mkdir "$dir/vendors"
cp "$icd" "$dir/vendors/troupe.icd"
echo "127.0.0.1:$port" >"$dir/hosts"
OCL_ICD_VENDORS="$dir/vendors"
# Khronos' loader (CUDA's libOpenCL) loads exactly this list when both are set; Debian's
# ocl-icd reads only the folder.
OCL_ICD_FILENAMES=$(head -n1 "$icd")
TROUPE_ICD_HOSTS="$dir/hosts"
export OCL_ICD_VENDORS OCL_ICD_FILENAMES TROUPE_ICD_HOSTS

if [ -z "$expect" ]; then
  "$@"
  exit $?
fi
"$@" >"$dir/output" 2>&1
status=$?
cat "$dir/output"
if [ $status -eq 0 ] && ! grep -qF -- "$expect" "$dir/output"; then
  echo "$0: the output lacks '$expect'" >&2
  status=1
fi
exit $status
