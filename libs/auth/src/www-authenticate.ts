/** RFC 9728 §5.1: a 401 points the client at the protected resource metadata. */
export function wwwAuthenticate(publicUrl: string, resourcePath = '', withError = false): string {
  const metadata = `${publicUrl}/.well-known/oauth-protected-resource${resourcePath}`;
  const error = withError ? ', error="invalid_token"' : '';
  return `Bearer realm="${publicUrl}"${error}, resource_metadata="${metadata}"`;
}
