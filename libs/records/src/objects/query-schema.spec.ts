import { OPS_BY_TYPE, parseFilter, parseOrderBy, sortableFields } from '../query/index.js';
import { companyObject } from './company.object.js';
import { opportunityObject } from './opportunity.object.js';
import { personObject } from './person.object.js';
import { querySchemaOf } from './query-schema.js';

/** The list parameters' schemas derived from the declarations: the fields and orders the hand-written ones had. */
describe('querySchemaOf', () => {
  const leaves = (object: typeof companyObject) =>
    Object.values(querySchemaOf(object).fields).map((f) => [f.path, f.column, f.type, f.nullable, f.sortable]);

  it('companies: the same leaves, columns, types and composite sort as before the declarations', () => {
    expect(leaves(companyObject)).toEqual([
      ['id', 'id', 'uuid', false, true],
      ['name', 'name', 'text', false, true],
      ['domainName.primaryLinkUrl', 'domain_primary_link_url', 'text', true, true],
      ['domainName.primaryLinkLabel', 'domain_primary_link_label', 'text', true, true],
      ['createdAt', 'created_at', 'timestamp', false, true],
      ['updatedAt', 'updated_at', 'timestamp', false, true],
      ['deletedAt', 'deleted_at', 'timestamp', true, true],
    ]);
    expect(querySchemaOf(companyObject).compositeSort).toEqual({ domainName: ['domainName.primaryLinkUrl'] });
  });

  it('people: the same, with the e-mail list filterable but not sortable', () => {
    expect(leaves(personObject)).toEqual([
      ['id', 'id', 'uuid', false, true],
      ['name.firstName', 'first_name', 'text', true, true],
      ['name.lastName', 'last_name', 'text', true, true],
      ['emails.primaryEmail', 'primary_email', 'text', true, true],
      ['emails.additionalEmails', 'additional_emails', 'textArray', false, false],
      ['companyId', 'company_id', 'uuid', true, true],
      ['createdAt', 'created_at', 'timestamp', false, true],
      ['updatedAt', 'updated_at', 'timestamp', false, true],
      ['deletedAt', 'deleted_at', 'timestamp', true, true],
    ]);
    expect(querySchemaOf(personObject).compositeSort).toEqual({
      name: ['name.firstName', 'name.lastName'],
      emails: ['emails.primaryEmail'],
    });
  });

  it('opportunities: integer micros, an enum stage with its values, two relations; amount sorts by its micros', () => {
    const schema = querySchemaOf(opportunityObject);
    expect(schema.fields['amount.amountMicros']).toMatchObject({ column: 'amount_micros', type: 'bigint', nullable: true, sortable: true });
    expect(schema.fields.stage).toMatchObject({
      type: 'enum',
      nullable: false,
      values: ['NEW', 'SCREENING', 'MEETING', 'PROPOSAL', 'CUSTOMER'],
    });
    expect(schema.fields.pointOfContactId).toMatchObject({ column: 'point_of_contact_id', type: 'uuid' });
    expect(sortableFields(schema)).toContain('amount');
    expect(parseOrderBy('amount[DescNullsLast]', schema)).toEqual([{ field: 'amount.amountMicros', direction: 'DescNullsLast' }]);
    expect(OPS_BY_TYPE[schema.fields.stage.type]).toEqual(['eq', 'neq', 'in', 'is']);
    expect(parseFilter('stage[in]:["NEW","MEETING"],amount.amountMicros[gte]:1000000', schema)).toEqual({
      kind: 'and',
      children: [
        { kind: 'cond', field: 'stage', op: 'in', value: ['NEW', 'MEETING'] },
        { kind: 'cond', field: 'amount.amountMicros', op: 'gte', value: '1000000' },
      ],
    });
    expect(() => parseFilter('amount.amountMicros[eq]:9007199254740992', schema)).toThrow(/expects an integer/);
    expect(() => parseFilter('stage[eq]:"new"', schema)).toThrow(/expects one of NEW/);
  });
});
