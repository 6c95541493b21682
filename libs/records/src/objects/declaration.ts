import type { ColumnField, StandardTypeName } from '../field-types/index.js';

/*
 * One declaration per record object (issue 11, docs/architecture.md): its names, and its
 * fields as field metadata (docs/decisions/0062-standard-fields-in-the-registry.md): each
 * field names its type in the field-type registry (libs/records/src/field-types/, the
 * names custom fields use) with its options and settings, and where it is stored. Every
 * surface asks the field's type what a value is (validation, SQL, REST and OpenAPI,
 * GraphQL, MCP, exports and imports, the docs' field tables, the settings page); none
 * switches on a type name. Static, in code (the approach of twenty-server's standard
 * objects without per-workspace metadata).
 */

export type { FieldDocs } from '../field-types/index.js';

/** The weight a field's words carry in its record's search vector: names `a`, e-mails, domains and links `b` (docs/decisions/0030-search.md). */
export type SearchWeight = 'a' | 'b';

/** A standard object's field (ColumnField: its metadata and columns), with its weight in search. */
export interface StandardField extends ColumnField {
  type: StandardTypeName;
  search?: SearchWeight;
}

export interface ObjectDeclaration<F extends StandardField = StandardField> {
  /** Plural, lower camel case: route, permission object, list key (`companies`). */
  plural: string;
  /** `company`: messages, get key. */
  singular: string;
  /** GraphQL type name (`Company`). */
  typeName: string;
  /** Capitalised plural, for mutations and tool titles (`Companies`). */
  pluralType: string;
  table: string;
  /** Article for messages ("a company", "an opportunity"). */
  article: 'a' | 'an';
  /** How tool descriptions refer to one record: its people / their company. */
  pronoun: 'it' | 'they';
  /**
   * A role that allows nothing on this object leaves it out of its permissions (absent means
   * none). For objects added after roles existed, so custom roles read as they were saved.
   */
  sparsePermissions?: boolean;
  /** Fields after `id` and before the timestamps, in the order clients see them. */
  fields: F[];
  /** How a record is named in tool summaries: the field path(s) tried in turn. */
  label: string[];
  /** Texts of this object on each surface. */
  docs: {
    /** OpenAPI tag description. */
    tag: string;
    /** Shown on DELETE routes and the delete tool. */
    deleteNote?: string;
    /** create tool description. */
    createTool: string;
    /** update tool description. */
    updateTool: string;
    /** Examples of the list parameters (REST and MCP). */
    filterExamples: Record<string, string>;
    orderByExamples: Record<string, string>;
    /** MCP list tool examples when they differ from the REST ones. */
    toolFilterExamples?: string[];
    toolOrderByExamples?: string[];
    /** An example of the group-by parameters (REST, MCP). */
    groupByExample?: { groupBy: string; aggregate: string };
    /** What OpenAPI examples of the record's id look like. */
    idExample: string;
  };
}
