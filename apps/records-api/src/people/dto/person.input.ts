import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEmail, IsObject, IsOptional, IsString, IsUUID, MaxLength, ValidateIf, ValidateNested } from 'class-validator';

/*
 * Request bodies of the person calls: class-validator rules enforced by the service layer,
 * described for the OpenAPI document by the @ApiProperty lines.
 */

export class FullNameInput {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, example: 'Ada' })
  @IsOptional() @IsString() @MaxLength(200)
  firstName?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, example: 'Lovelace' })
  @IsOptional() @IsString() @MaxLength(200)
  lastName?: string | null;
}

export class EmailsInput {
  @ApiPropertyOptional({ type: String, format: 'email', nullable: true, maxLength: 320, example: 'ada@acme.com' })
  @IsOptional() @IsEmail() @MaxLength(320)
  primaryEmail?: string | null;

  @ApiPropertyOptional({ type: [String], nullable: true, maxItems: 20, description: 'E-mail addresses; replaces the whole list.' })
  @IsOptional() @IsArray() @ArrayMaxSize(20) @IsEmail({}, { each: true })
  additionalEmails?: string[] | null;
}

export class PersonUpdateInput {
  @ApiPropertyOptional({ type: () => FullNameInput, nullable: true, description: 'Sub-fields left out keep their value; null clears both.' })
  @IsOptional() @IsObject() @ValidateNested() @Type(() => FullNameInput)
  name?: FullNameInput | null;

  @ApiPropertyOptional({ type: () => EmailsInput, nullable: true, description: 'Sub-fields left out keep their value; null clears both.' })
  @IsOptional() @IsObject() @ValidateNested() @Type(() => EmailsInput)
  emails?: EmailsInput | null;

  /** A live company of the same workspace, or null to unlink. */
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'A company of the same workspace; null unlinks.' })
  @IsOptional() @IsUUID()
  companyId?: string | null;
}

export class PersonCreateInput extends PersonUpdateInput {
  /** Optional client-chosen id (Twenty allows it); a taken id is a 409. `null` is refused, not inserted. */
  @ApiPropertyOptional({ format: 'uuid', description: 'Optional id of your choosing; one that exists already is a 409 CONFLICT.' })
  @ValidateIf((o: PersonCreateInput) => o.id !== undefined) @IsUUID()
  id?: string;
}
