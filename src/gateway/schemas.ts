/**
 * Schema building blocks shared by every route: the wire's, from the contract module
 * (src/protocol), re-exported for the routes.
 */
export { Amount, StringEnum, Id, IgnoredTenantIds, OptionalBody, ErrorEnvelope as ErrorBody, type Static } from '../protocol/schemas.js';
