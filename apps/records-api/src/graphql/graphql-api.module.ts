import { Module } from '@nestjs/common';

/** Placeholder until the GraphQL transport lands. */
@Module({})
export class GraphqlApiModule {}
