/*
 * Composite field types (Twenty's LINKS, FULL_NAME, EMAILS, CURRENCY, PHONES, ADDRESS): each
 * is declared once, in its field-type module (libs/records/src/field-types/), with its
 * sub-fields and the names each transport gives them. Objects use them through a
 * `composite` field; custom fields of those types are the same definitions.
 */
export { COMPOSITES, composite, LINK, type CompositeType, type SubField, type SubFieldKind } from '../field-types/index.js';
