import { Type } from 'class-transformer';
import {
  ArrayMaxSize, IsArray, IsNotEmpty, IsObject, IsOptional, IsString, IsUUID, IsUrl, MaxLength, ValidateIf, ValidateNested,
} from 'class-validator';

/** `acme.com` or `https://acme.com/x`: a bare domain is accepted and kept as given (SPEC §2). */
const URL_RULE = { require_protocol: false, protocols: ['http', 'https'] };

export class LinkInput {
  @IsString() @IsUrl(URL_RULE) @MaxLength(2048)
  url: string;

  @IsOptional() @IsString() @MaxLength(200)
  label?: string | null;
}

export class DomainNameInput {
  @IsOptional() @IsString() @IsUrl(URL_RULE) @MaxLength(2048)
  primaryLinkUrl?: string | null;

  @IsOptional() @IsString() @MaxLength(200)
  primaryLinkLabel?: string | null;

  @IsOptional() @IsArray() @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => LinkInput)
  secondaryLinks?: LinkInput[] | null;
}

export class CompanyCreateInput {
  /** Optional client-chosen id (Twenty allows it); a taken id is a 409. `null` is refused, not inserted. */
  @ValidateIf((o: CompanyCreateInput) => o.id !== undefined) @IsUUID()
  id?: string;

  @IsString() @IsNotEmpty() @MaxLength(500)
  name: string;

  @IsOptional() @IsObject() @ValidateNested() @Type(() => DomainNameInput)
  domainName?: DomainNameInput | null;
}

export class CompanyUpdateInput {
  @ValidateIf((o: CompanyUpdateInput) => o.name !== undefined) @IsString() @IsNotEmpty() @MaxLength(500)
  name?: string;

  @IsOptional() @IsObject() @ValidateNested() @Type(() => DomainNameInput)
  domainName?: DomainNameInput | null;
}
