// The seam for spec section 6 (subscription events). Creating or cancelling
// a subscription through the admin API calls `created`/`cancelled` here with
// everything the payloads need (subscriber, package, validFrom, validUntil).
// The publisher (src/events/subscription-events.ts, subscribed in main.ts)
// appends subscriptionCreated_v3 and subscriptionCancelled_v1 to the
// platform.authorization topic's event log.
import type { PackageDecl, TenantDecl } from '../../bootstrap/bootstrap-file'
import type { SubscriptionRecord } from '../models/auth-store'
import { log } from '../../telemetry/log'

export interface SubscriptionChange {
  type: 'subscriptionCreated' | 'subscriptionCancelled'
  subscription: SubscriptionRecord
  subscriber: TenantDecl
  package: PackageDecl
  /** ISO 8601 with offset */
  validFrom: string
  /** ISO 8601 with offset; cancellations only */
  validUntil?: string
}

export type SubscriptionListener = (change: SubscriptionChange) => void

export class SubscriptionEvents {
  private readonly listeners: SubscriptionListener[] = []

  subscribe(listener: SubscriptionListener): void {
    this.listeners.push(listener)
  }

  private emit(change: SubscriptionChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change)
      } catch (err) {
        log.error({ err }, 'subscription event listener failed')
      }
    }
  }

  created(subscription: SubscriptionRecord, subscriber: TenantDecl, pkg: PackageDecl): void {
    this.emit({ type: 'subscriptionCreated', subscription, subscriber, package: pkg, validFrom: subscription.validFrom ?? '' })
  }

  cancelled(subscription: SubscriptionRecord, subscriber: TenantDecl, pkg: PackageDecl, validUntil: string): void {
    this.emit({ type: 'subscriptionCancelled', subscription, subscriber, package: pkg, validFrom: subscription.validFrom ?? '', validUntil })
  }
}
