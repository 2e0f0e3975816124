package sdktest

import "github.com/extkernel/extkernel/protocol"

// Every name the suite takes from the wire protocol is here, so that a
// move of the wire mechanics to another package changes this file alone.

type (
	message          = protocol.Message
	wireError        = protocol.Error
	initializeParams = protocol.InitializeParams
	initializeResult = protocol.InitializeResult
	hostInfo         = protocol.HostInfo
	pluginInfo       = protocol.PluginInfo
	interceptParams  = protocol.InterceptParams
	interceptResult  = protocol.InterceptResult
	strategyParams   = protocol.StrategyInvokeParams
	providerParams   = protocol.ProviderInvokeParams
	actionParams     = protocol.ActionRunParams
	cancelParams     = protocol.CancelParams
	frameReader      = protocol.FrameReader
)

const (
	jsonrpcVersion  = protocol.JSONRPCVersion
	protocolVersion = protocol.Version

	methodInitialize     = protocol.MethodInitialize
	methodIntercept      = protocol.MethodIntercept
	methodStrategyInvoke = protocol.MethodStrategyInvoke
	methodProviderInvoke = protocol.MethodProviderInvoke
	methodActionRun      = protocol.MethodActionRun
	methodPing           = protocol.MethodPing
	methodShutdown       = protocol.MethodShutdown
	methodCancel         = protocol.MethodCancel
	methodLog            = protocol.MethodLog
	methodNotify         = protocol.MethodNotify

	codeParseError       = protocol.CodeParseError
	codeInvalidRequest   = protocol.CodeInvalidRequest
	codeMethodNotFound   = protocol.CodeMethodNotFound
	codeRequestCancelled = protocol.CodeRequestCancelled

	decisionContinue = protocol.DecisionContinue
	decisionModify   = protocol.DecisionModify
	decisionDeny     = protocol.DecisionDeny

	maxFrame                = protocol.DefaultMaxFrame
	defaultHandshakeTimeout = protocol.DefaultHandshakeTimeout
	maxHandshakeTimeout     = protocol.MaxHandshakeTimeout
	shutdownGrace           = protocol.DefaultShutdownGrace
	killGrace               = protocol.DefaultKillGrace
	writeStall              = protocol.DefaultWriteStall
)

// newFrameReader and decodeMessage are the protocol's framing: a bounded
// line reader, and the envelope check (duplicate members included).
var (
	newFrameReader = protocol.NewFrameReader
	decodeMessage  = protocol.DecodeMessage
	errFrameLarge  = protocol.ErrFrameTooLarge
)
