#!/bin/sh
# A plugin with no SDK and no JSON library, written against protocol 1.4.0:
# POSIX sh and sed, one interceptor. It reads the id and the method of each
# line with sed (the host writes one compact JSON object per line, §1),
# answers initialize with exactly 1.4.0, announcing no optional feature
# ("features": [], protocol 1.4), and ignores every other member.
# Frozen: see testdata/corpus/README.md.
VERSION=1.4.0
ready=0
send() { printf '%s\n' "$1"; }
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	'') continue ;;
	'['*) send '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not a request"}}'; continue ;;
	'{'*'}') ;;
	*) send '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}'; continue ;;
	esac
	method=$(printf '%s\n' "$line" | sed -n 's/.*"method":"\([^"]*\)".*/\1/p')
	id=$(printf '%s\n' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\|"[^"]*"\).*/\1/p')
	[ -n "$method" ] && [ -n "$id" ] || continue # notifications ($/cancel), responses
	case $method in
	initialize)
		ready=1
		send '{"jsonrpc":"2.0","id":'"$id"',"result":{"protocol_version":"'"$VERSION"'","name":"raw-shell","version":"1.0.0","interceptors":[{"point":"tool.before"}],"x_corpus_future":1,"features":[]}}' ;;
	*)
		if [ "$ready" != 1 ]; then
			send '{"jsonrpc":"2.0","id":'"$id"',"error":{"code":-32002,"message":"not initialized"}}'
			continue
		fi
		case $method in
		intercept) send '{"jsonrpc":"2.0","id":'"$id"',"result":{"decision":"continue"}}' ;;
		ping | shutdown) send '{"jsonrpc":"2.0","id":'"$id"',"result":{}}' ;;
		*) send '{"jsonrpc":"2.0","id":'"$id"',"error":{"code":-32601,"message":"unknown method"}}' ;;
		esac ;;
	esac
done
