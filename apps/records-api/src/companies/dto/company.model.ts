import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PersonModel } from '../../people/dto/person.model.js';

/* A company as REST returns it (CompanyRecord), for the OpenAPI document. */

export class LinkModel {
  @ApiProperty({ example: 'https://acme.com/about' })
  url: string;

  @ApiProperty({ type: String, nullable: true, example: 'About us' })
  label: string | null;
}

export class LinksModel {
  @ApiProperty({ type: String, nullable: true, example: 'acme.com', description: 'A URL, or a bare domain kept as given.' })
  primaryLinkUrl: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  primaryLinkLabel: string | null;

  @ApiProperty({ type: () => [LinkModel] })
  secondaryLinks: LinkModel[];
}

export class CompanyModel {
  @ApiProperty({ format: 'uuid', example: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10' })
  id: string;

  @ApiProperty({ example: 'Acme' })
  name: string;

  @ApiProperty({ type: () => LinksModel })
  domainName: LinksModel;

  @ApiProperty({ format: 'date-time', example: '2025-01-31T12:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2025-01-31T12:00:00.000Z' })
  updatedAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null, description: 'Set when the company was deleted (soft delete).' })
  deletedAt: string | null;

  @ApiPropertyOptional({ type: () => [PersonModel], description: 'Only with depth=1: the 60 oldest live people of the company.' })
  people?: PersonModel[];
}
