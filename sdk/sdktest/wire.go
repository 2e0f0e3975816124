package sdktest

import (
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// Every name the suite takes from the wire protocol is here, so that a
// move of the wire mechanics to another package changes this file alone.

type (
	message          = wire.Message
	wireError        = protocol.Error
	initializeParams = protocol.InitializeParams
	initializeResult = protocol.InitializeResult
	hostInfo         = protocol.HostInfo
	pluginInfo       = protocol.PluginInfo
	interceptParams  = wire.InterceptParams
	interceptResult  = protocol.InterceptResult
	strategyParams   = wire.StrategyInvokeParams
	providerParams   = wire.ProviderInvokeParams
	actionParams     = wire.ActionRunParams
	cancelParams     = wire.CancelParams
	frameReader      = wire.FrameReader
)

const (
	jsonrpcVersion  = wire.JSONRPCVersion
	protocolVersion = protocol.Version

	methodInitialize     = wire.MethodInitialize
	methodIntercept      = wire.MethodIntercept
	methodStrategyInvoke = wire.MethodStrategyInvoke
	methodProviderInvoke = wire.MethodProviderInvoke
	methodActionRun      = wire.MethodActionRun
	methodPing           = wire.MethodPing
	methodShutdown       = wire.MethodShutdown
	methodCancel         = wire.MethodCancel
	methodLog            = wire.MethodLog
	methodNotify         = wire.MethodNotify

	codeParseError       = protocol.CodeParseError
	codeInvalidRequest   = protocol.CodeInvalidRequest
	codeMethodNotFound   = protocol.CodeMethodNotFound
	codeRequestCancelled = protocol.CodeRequestCancelled

	decisionContinue = protocol.DecisionContinue
	decisionModify   = protocol.DecisionModify
	decisionDeny     = protocol.DecisionDeny

	maxFrame                = wire.DefaultMaxFrame
	defaultHandshakeTimeout = wire.DefaultHandshakeTimeout
	maxHandshakeTimeout     = wire.MaxHandshakeTimeout
	shutdownGrace           = wire.DefaultShutdownGrace
	killGrace               = wire.DefaultKillGrace
	writeStall              = wire.DefaultWriteStall
)

// newFrameReader and decodeMessage are the protocol's framing: a bounded
// line reader, and the envelope check (duplicate members included).
var (
	newFrameReader = wire.NewFrameReader
	decodeMessage  = wire.DecodeMessage
	errFrameLarge  = wire.ErrFrameTooLarge
)
