import { dropListItems } from './open-api-restricted.js';

describe('dropListItems (the OpenAPI lists a role with hidden fields reads)', () => {
  it('drops an item anywhere in a comma list, with its leaves', () => {
    expect(dropListItems('Sortable: id, name, amount.amountMicros, amount.currencyCode, stage, amount. `id` always', ['amount'])).toBe(
      'Sortable: id, name, stage. `id` always',
    );
    expect(dropListItems('Fields that group: name, stage. None: one group', ['name'])).toBe('Fields that group: stage. None: one group');
  });

  it('drops backticked items with their operators from a list separated by semicolons', () => {
    expect(dropListItems('Fields (operators): `id` (eq, in); `amount.amountMicros` (eq, gt); `stage` (eq).', ['amount'])).toBe(
      'Fields (operators): `id` (eq, in); `stage` (eq).',
    );
  });

  it('drops a lone item in parentheses and says none for a list left empty', () => {
    expect(dropListItems('sum:<field>, avg:<field> (amount.amountMicros), min:<field>', ['amount'])).toBe(
      'sum:<field>, avg:<field>, min:<field>',
    );
    expect(dropListItems('Fields that group: amount.currencyCode. None: one group', ['amount'])).toBe(
      'Fields that group: none. None: one group',
    );
  });

  it('drops a relation condition from the examples, and leaves the same name on another object alone', () => {
    expect(dropListItems('(e.g. company.name[eq]:"…", pointOfContact.name.firstName[eq]:"…")', ['company.name'])).toBe(
      '(e.g. pointOfContact.name.firstName[eq]:"…")',
    );
    expect(dropListItems('Across one relation: pointOfContact.name.firstName, stage', ['name'])).toBe(
      'Across one relation: pointOfContact.name.firstName, stage',
    );
  });

  it('leaves prose and longer names alone', () => {
    const prose = 'Comma list of field names (custom fields included). An unknown name → 400; amountMicros, names.';
    expect(dropListItems(prose, ['name', 'amount'])).toBe(prose);
  });
});
