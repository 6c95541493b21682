/*
 * Classes made at start from the object declarations, decorated as hand-written ones
 * would be: `@A() @B() prop` applies B, then A, so `property` applies its list in reverse.
 * `design:type` is what tsc would emit for the property (swagger and class-transformer
 * read it), so a generated class describes itself exactly as its hand-written twin did.
 */

export type Ctor = new () => object;
/** Any class, as decorators and injection tokens take it. */
export type AnyClass = abstract new (...args: never[]) => unknown;

/** A class named `name` (swagger and GraphQL name schemas after their classes). */
export function namedClass(name: string, base?: Ctor): Ctor {
  const made = base ? { [name]: class extends base {} }[name] : { [name]: class {} }[name];
  return made as Ctor;
}

export function property(cls: Ctor, name: string, designType: unknown, decorators: PropertyDecorator[]): void {
  Reflect.defineMetadata('design:type', designType, cls.prototype, name);
  for (const decorator of [...decorators].reverse()) decorator(cls.prototype, name);
}

export function method(
  cls: AnyClass,
  name: string,
  impl: (...args: never[]) => unknown,
  decorators: MethodDecorator[],
  params: ParameterDecorator[] = [],
  paramTypes: unknown[] = [],
): void {
  Object.defineProperty(cls.prototype, name, { value: impl, writable: true, configurable: true, enumerable: false });
  Reflect.defineMetadata('design:paramtypes', paramTypes.length ? paramTypes : params.map(() => Object), cls.prototype, name);
  Reflect.defineMetadata('design:returntype', Object, cls.prototype, name);
  params.forEach((decorator, index) => decorator(cls.prototype, name, index));
  for (const decorator of [...decorators].reverse()) {
    const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name)!;
    const result = decorator(cls.prototype, name, descriptor);
    if (result) Object.defineProperty(cls.prototype, name, result);
  }
}

export function classDecorators(cls: AnyClass, decorators: ClassDecorator[]): void {
  for (const decorator of [...decorators].reverse()) decorator(cls);
}

export const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A class named `name` whose constructor takes one injected dependency as `service` (controllers, resolvers). */
export function serviceHolder<S>(name: string, token: AnyClass): new (service: S) => { service: S } {
  const cls = {
    [name]: class {
      constructor(readonly service: S) {}
    },
  }[name];
  Reflect.defineMetadata('design:paramtypes', [token], cls);
  return cls;
}
