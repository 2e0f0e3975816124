# A plugin in bash with no SDK and no jq, run as "bash plugin.sh": it
# answers initialize (declaring the provider "version"), provider/invoke
# (its output is $VERSION, so a test sees which code runs), ping and
# shutdown, one request at a time, and exits when stdin closes. It reads
# the id and method of each request with bash's own regular expressions,
# which is enough for the host's messages (no string holds `"id":`).
VERSION=v1
while IFS= read -r line; do
	[[ $line =~ \"id\":([0-9]+) ]] || continue
	id=${BASH_REMATCH[1]}
	[[ $line =~ \"method\":\"([^\"]+)\" ]] || continue
	case ${BASH_REMATCH[1]} in
	initialize)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocol_version":"1.0.0","name":"%s","version":"%s","providers":[{"ref":"version"}]}}\n' \
			"$id" "$EXTKERNEL_PLUGIN_NAME" "$EXTKERNEL_PLUGIN_VERSION" ;;
	provider/invoke) printf '{"jsonrpc":"2.0","id":%s,"result":{"output":"%s"}}\n' "$id" "$VERSION" ;;
	ping | shutdown) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
	*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown method"}}\n' "$id" ;;
	esac
done
