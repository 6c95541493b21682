/*
 * Confirming a change of many records (docs/mcp.md "Generic tools"): what a tool is told of
 * the user's answer, what it hands back to have them asked, and its refusal without one.
 */

/** A refusal of MCP's alone that the agent acts on: a tool error `CODE: message`, as domain errors are. */
export class ToolRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A change of many records the user has not agreed to: a tool error (CONFIRMATION_REQUIRED)
 * the agent acts on, MCP's alone (REST and GraphQL change by filter as asked).
 */
export class ConfirmationRequired extends ToolRefusal {
  constructor(message: string) {
    super('CONFIRMATION_REQUIRED', message);
  }
}

/** How a change of more than one record is confirmed (mcp-server.ts answers for the client). */
export interface Confirmation {
  /** The client can ask its user within this request (MCP 2026-07-28's input_required round trip). */
  canAsk: boolean;
  /** What the user answered on a retried request: accepted, declined (or cancelled), or not asked yet. */
  answer?: 'accept' | 'decline';
}

/** A tool's outcome when the user must be asked first: the question, then the same call again. */
export interface AskFirst {
  ask: string;
}
