/** q-value of a media type in an Accept header (RFC 9110 §12.5.1); 0 when absent. */
function quality(accept: string, type: string): number {
  for (const part of accept.split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (name.trim().toLowerCase() !== type) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q ? Number(q.slice(2)) || 0 : 1;
  }
  return 0;
}

/**
 * Streamable HTTP answers a POST with JSON or with an SSE stream (MCP spec, "Transports").
 * Clients accept both; we answer JSON unless the client ranks text/event-stream higher.
 */
export function prefersEventStream(accept: string | undefined): boolean {
  return accept ? quality(accept, 'text/event-stream') > quality(accept, 'application/json') : false;
}
