import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEmail, IsObject, IsOptional, IsString, IsUUID, MaxLength, ValidateIf, ValidateNested } from 'class-validator';

export class FullNameInput {
  @IsOptional() @IsString() @MaxLength(200)
  firstName?: string | null;

  @IsOptional() @IsString() @MaxLength(200)
  lastName?: string | null;
}

export class EmailsInput {
  @IsOptional() @IsEmail() @MaxLength(320)
  primaryEmail?: string | null;

  @IsOptional() @IsArray() @ArrayMaxSize(20) @IsEmail({}, { each: true })
  additionalEmails?: string[] | null;
}

export class PersonUpdateInput {
  @IsOptional() @IsObject() @ValidateNested() @Type(() => FullNameInput)
  name?: FullNameInput | null;

  @IsOptional() @IsObject() @ValidateNested() @Type(() => EmailsInput)
  emails?: EmailsInput | null;

  /** A live company of the same workspace, or null to unlink. */
  @IsOptional() @IsUUID()
  companyId?: string | null;
}

export class PersonCreateInput extends PersonUpdateInput {
  /** Optional client-chosen id (Twenty allows it); a taken id is a 409. `null` is refused, not inserted. */
  @ValidateIf((o: PersonCreateInput) => o.id !== undefined) @IsUUID()
  id?: string;
}
