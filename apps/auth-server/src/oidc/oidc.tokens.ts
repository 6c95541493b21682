export const OIDC_PROVIDER = Symbol('OIDC_PROVIDER');
