package wire

// contribution/invoke (protocol 1.1) joins the method table the schema
// tests hold to docs/protocol.schema.json.
func init() {
	goMethods[MethodContributionInvoke] = goMethod{"host-to-plugin", false, typeOf[ContributionInvokeParams](), typeOf[OutputResult]()}
}
