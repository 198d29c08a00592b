/**
 * Schema building blocks shared by every route: the wire's, from the contract module
 * (agentpay-sdk/contract, packages/sdk/src/contract), re-exported for the routes.
 */
export { Amount, StringEnum, Id, IgnoredTenantIds, MultilineString, OptionalBody, ErrorEnvelope as ErrorBody, type Static } from 'agentpay-sdk/contract';
