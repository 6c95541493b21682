import { relationFields, type ObjectDeclaration } from '../objects/index.js';
import { EMBEDDED_PER_RECORD } from './constants.js';
import { inversesOf } from './records.service.js';

/**
 * What `depth=1` embeds on each record of an object, in words: REST (`code` names, "(or
 * null)") or MCP (plain). "each company's `people` (its 60 oldest)".
 */
export function embeddedText(object: ObjectDeclaration, style: 'rest' | 'tool'): string {
  const name = (n: string) => (style === 'rest' ? `\`${n}\`` : n);
  const links = relationFields(object).map((f) => name(f.relation));
  const lists = inversesOf(object.plural).map((inv) => `${name(inv.field.inverse)} (its ${EMBEDDED_PER_RECORD} oldest)`);
  const parts = [];
  if (links.length) parts.push(`${links.join(' and ')}${style === 'rest' ? ' (or null)' : ''}`);
  parts.push(...lists);
  // A custom object has no relation yet (docs/data-model.md "Custom objects"): depth=1 adds nothing to it.
  if (!parts.length) return `nothing (${object.plural} link to no other object)`;
  return `each ${object.singular}'s ${parts.join(' and ')}`;
}
