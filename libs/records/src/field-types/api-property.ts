import type { ApiProperty as SwaggerApiProperty, ApiPropertyOptional as SwaggerApiPropertyOptional } from '@nestjs/swagger';

/*
 * The OpenAPI decorators the type modules put on REST classes, lent by the module that builds
 * those classes (libs/records/src/service/rest-classes.ts imports @nestjs/swagger and calls
 * lendSwagger): the registry itself never loads @nestjs/swagger, which takes about a second to
 * load, so the CLI and everything else that reads field metadata start without it.
 */

interface Swagger {
  ApiProperty: typeof SwaggerApiProperty;
  ApiPropertyOptional: typeof SwaggerApiPropertyOptional;
}

let swagger: Swagger | undefined;

export function lendSwagger(decorators: Swagger): void {
  swagger = decorators;
}

function lent(): Swagger {
  if (!swagger) throw new Error('REST classes built before rest-classes.ts lent the OpenAPI decorators');
  return swagger;
}

export const ApiProperty: typeof SwaggerApiProperty = (options) => lent().ApiProperty(options);
export const ApiPropertyOptional: typeof SwaggerApiPropertyOptional = (options) => lent().ApiPropertyOptional(options);
