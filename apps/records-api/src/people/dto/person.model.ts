import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CompanyModel } from '../../companies/dto/company.model.js';

/* A person as REST returns it (PersonRecord), for the OpenAPI document. */

export class FullNameModel {
  @ApiProperty({ type: String, nullable: true, example: 'Ada' })
  firstName: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'Lovelace' })
  lastName: string | null;
}

export class EmailsModel {
  @ApiProperty({ type: String, format: 'email', nullable: true, example: 'ada@acme.com' })
  primaryEmail: string | null;

  @ApiProperty({ type: [String], example: [] })
  additionalEmails: string[];
}

export class PersonModel {
  @ApiProperty({ format: 'uuid', example: '7d4f8a52-1c3b-4e2f-9a6d-5b8c0e1f2a3b' })
  id: string;

  @ApiProperty({ type: () => FullNameModel })
  name: FullNameModel;

  @ApiProperty({ type: () => EmailsModel })
  emails: EmailsModel;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, example: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10' })
  companyId: string | null;

  @ApiProperty({ format: 'date-time', example: '2025-01-31T12:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2025-01-31T12:00:00.000Z' })
  updatedAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null, description: 'Set when the person was deleted (soft delete).' })
  deletedAt: string | null;

  @ApiPropertyOptional({ type: () => CompanyModel, nullable: true, description: 'Only with depth=1: the linked live company, or null.' })
  company?: CompanyModel | null;
}
