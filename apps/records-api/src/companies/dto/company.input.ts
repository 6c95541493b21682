import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize, IsArray, IsNotEmpty, IsObject, IsOptional, IsString, IsUUID, IsUrl, MaxLength, ValidateIf, ValidateNested,
} from 'class-validator';

/** `acme.com` or `https://acme.com/x`: a bare domain is accepted and kept as given (SPEC §2). */
const URL_RULE = { require_protocol: false, protocols: ['http', 'https'] };

/*
 * Request bodies of the company calls. class-validator rules are what the service layer
 * enforces (for REST, GraphQL and MCP alike); the @ApiProperty lines describe the same
 * rules in the OpenAPI document.
 */

export class LinkInput {
  @ApiProperty({ description: 'A URL; a bare domain such as acme.com is kept as given.', maxLength: 2048, example: 'https://acme.com/about' })
  @IsString() @IsUrl(URL_RULE) @MaxLength(2048)
  url: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, example: 'About us' })
  @IsOptional() @IsString() @MaxLength(200)
  label?: string | null;
}

export class DomainNameInput {
  @ApiPropertyOptional({
    type: String, nullable: true, maxLength: 2048, example: 'acme.com',
    description: 'The main website: a URL, or a bare domain such as acme.com (kept as given).',
  })
  @IsOptional() @IsString() @IsUrl(URL_RULE) @MaxLength(2048)
  primaryLinkUrl?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, example: 'Website' })
  @IsOptional() @IsString() @MaxLength(200)
  primaryLinkLabel?: string | null;

  @ApiPropertyOptional({ type: () => [LinkInput], nullable: true, maxItems: 20, description: 'Replaces the whole list.' })
  @IsOptional() @IsArray() @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => LinkInput)
  secondaryLinks?: LinkInput[] | null;
}

export class CompanyCreateInput {
  /** Optional client-chosen id (Twenty allows it); a taken id is a 409. `null` is refused, not inserted. */
  @ApiPropertyOptional({ format: 'uuid', description: 'Optional id of your choosing; one that exists already is a 409 CONFLICT.' })
  @ValidateIf((o: CompanyCreateInput) => o.id !== undefined) @IsUUID()
  id?: string;

  @ApiProperty({ minLength: 1, maxLength: 500, example: 'Acme' })
  @IsString() @IsNotEmpty() @MaxLength(500)
  name: string;

  @ApiPropertyOptional({ type: () => DomainNameInput, nullable: true })
  @IsOptional() @IsObject() @ValidateNested() @Type(() => DomainNameInput)
  domainName?: DomainNameInput | null;
}

export class CompanyUpdateInput {
  @ApiPropertyOptional({ minLength: 1, maxLength: 500, example: 'Acme Corporation' })
  @ValidateIf((o: CompanyUpdateInput) => o.name !== undefined) @IsString() @IsNotEmpty() @MaxLength(500)
  name?: string;

  @ApiPropertyOptional({ type: () => DomainNameInput, nullable: true, description: 'Sub-fields left out keep their value; null clears the whole field.' })
  @IsOptional() @IsObject() @ValidateNested() @Type(() => DomainNameInput)
  domainName?: DomainNameInput | null;
}
