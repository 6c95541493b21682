import { Args, Query, Resolver } from '@nestjs/graphql';
import { RevealForbidden } from '#identity/vault.js';

/**
 * GraphQL has no vault, except this one field, there so that a client asking for a value
 * learns why it cannot have it (docs/vault.md): `FORBIDDEN`, for every credential.
 */
@Resolver()
export class VaultResolver {
  @Query(() => String, {
    name: 'vaultSecretValue',
    nullable: true,
    description:
      'Always FORBIDDEN: vault values are never revealed to API keys or access tokens; a signed-in member reveals one on /settings/vault.',
  })
  vaultSecretValue(@Args('name', { type: () => String }) _name: string): never {
    throw new RevealForbidden();
  }
}
