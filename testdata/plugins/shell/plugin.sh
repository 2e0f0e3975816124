#!/usr/bin/env bash
# A raw extkernel plugin in bash, with no SDK, that leaves a helper process
# behind in the way its first argument names. Before the handshake it
# records the helper's pid in $EXTKERNEL_DATA_DIR/helper.pid.
#
#   child        runs `sleep 600 &`: a child in the plugin's process group,
#                holding its stdout and stderr; then serves.
#   detach       runs `setsid sleep 600 &`: a helper that leaves the group
#                (as language servers and agents do) and keeps the plugin's
#                stdout and stderr; then serves until stdin ends.
#   detach-exit  the same, then exits with status 2 on its first call,
#                leaving the helper holding the pipes.
#
# It answers initialize, ping and shutdown, and echoes nothing else: any
# other request gets {"output": null}.
mode=$1
case $mode in
child) sleep 600 & ;;
detach | detach-exit)
	# The helper says when it has left the group; then it becomes sleep.
	ready=$EXTKERNEL_DATA_DIR/ready
	rm -f "$ready" && mkfifo "$ready" || exit 1
	setsid sh -c 'echo ready >"$1"; exec sleep 600' sh "$ready" &
	read -r _ <"$ready"
	rm -f "$ready"
	;;
*)
	echo "unknown mode: $mode" >&2
	exit 1
	;;
esac
echo $! >"$EXTKERNEL_DATA_DIR/helper.pid"

respond() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"; }

while IFS= read -r line; do
	id=${line#*\"id\":}
	id=${id%%[,\}]*}
	case $line in
	*'"method":"$/cancel"'*) ;;
	*'"method":"initialize"'*)
		respond "$id" "{\"protocol_version\":\"$EXTKERNEL_PROTOCOL_VERSION\",\"name\":\"$EXTKERNEL_PLUGIN_NAME\",\"version\":\"$EXTKERNEL_PLUGIN_VERSION\"}"
		;;
	*'"method":"ping"'* | *'"method":"shutdown"'*) respond "$id" '{}' ;;
	*)
		if [[ $mode == detach-exit ]]; then
			echo "exiting; the helper keeps my stdout and stderr" >&2
			exit 2
		fi
		respond "$id" '{"output":null}'
		;;
	esac
done
