/*
 * One declaration per record object (issue 11, docs/architecture.md): its fields with types and rules,
 * its relations and their inverses, its names. Everything per object is derived from it
 * when the app starts: the SQL mapping, validation, REST routes and OpenAPI schemas,
 * GraphQL types, MCP tools, role permissions and the docs' field tables. Static, in code
 * (the approach of twenty-server's standard objects without per-workspace metadata).
 */

/** Texts a field shows on each surface; a rule (lengths, formats, values) is never repeated here. */
export interface FieldDocs {
  /** On the record (GraphQL type, REST model, MCP output). */
  description?: string;
  /** On REST/GraphQL create and update inputs (`update` defaults to `create` only when `sameOnUpdate`). */
  create?: string;
  update?: string;
  /** GraphQL input descriptions, when they differ from `create`/`update`. */
  graphqlCreate?: string;
  graphqlUpdate?: string;
  /** MCP tool input description (one for create and update). */
  tool?: string;
  /** Examples for the OpenAPI document. */
  example?: unknown;
  updateExample?: unknown;
}

/** The weight a field's words carry in its record's search vector: names `a`, e-mails, domains and links `b` (docs/decisions/0030-search.md). */
export type SearchWeight = 'a' | 'b';

export interface TextField {
  kind: 'text';
  name: string;
  column: string;
  search?: SearchWeight;
  /** Needed on create and never null; its rule is "non-empty". */
  required?: boolean;
  maxLength: number;
  docs?: FieldDocs;
}

export interface EnumField {
  kind: 'enum';
  name: string;
  column: string;
  /** GraphQL enum name (`OpportunityStageEnum`). */
  enumName: string;
  values: readonly string[];
  default: string;
  docs?: FieldDocs;
}

export interface TimestampField {
  kind: 'timestamp';
  name: string;
  column: string;
  docs?: FieldDocs;
}

/** A many-to-one link by id: `companyId` → a live company of the same workspace. */
export interface RelationField {
  kind: 'relation';
  /** The id field, e.g. `companyId`. */
  name: string;
  column: string;
  /** Plural name of the target object. */
  target: string;
  /** The embedded record at depth=1 and in GraphQL, e.g. `company`. */
  relation: string;
  /** The list on the target, e.g. Company `people`; a GraphQL field of the target. */
  inverse: string;
  docs?: FieldDocs & {
    /** Description of the embedded record (REST depth=1, GraphQL field). */
    relation?: string;
    /** Description of the inverse list on the target. */
    inverse?: string;
  };
}

export interface CompositeField {
  kind: 'composite';
  name: string;
  search?: SearchWeight;
  /** A composite type of composites.ts. */
  type: string;
  /** Column of each sub-field. */
  columns: Record<string, string>;
  docs?: FieldDocs;
}

export type FieldDeclaration = TextField | EnumField | TimestampField | RelationField | CompositeField;

export interface ObjectDeclaration {
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
  fields: FieldDeclaration[];
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
