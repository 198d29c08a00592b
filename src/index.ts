/**
 * `import … from 'agentpay-cli'` gives the SDK's public surface, the same as `agentpay-sdk`. Programs
 * should depend on `agentpay-sdk` itself: it has no native modules and none of the gateway's
 * dependencies. This entry exists so the CLI package's `"."` export names a file that exists.
 */
export * from 'agentpay-sdk';
