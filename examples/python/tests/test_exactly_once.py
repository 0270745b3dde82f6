"""One App Store transaction pays one order, however many requests race, on SQLite and
on a real PostgreSQL: 50 concurrent clients through the HTTP front."""
import pytest

from http_api import Limits
from service import serve
from support import CONSUMABLE, MARS_LATEST, MARS_LATEST_BOUGHT, MERCURY, MERCURY_BOUGHT, NOW, concurrently, post, signed_receipt

MERCURY_ID = "com.test.app.mercury"


@pytest.fixture
def front(service):
    # 50 claims at once, each asking Apple, is the point here: not something to rate-limit or queue
    server = serve(service, "127.0.0.1", 0, retry_every_s=None, limits=Limits(claims_per_user=1000, claims_per_address=1000,
                                                                     orders_per_user=1000, apple_concurrency=64))
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def paid(ledger) -> list[dict]:
    return [o for o in ledger.orders() if o["status"] == "paid"]


def test_50_users_sending_one_receipt_pay_one_order(service, apple, front):
    """The replay the library exists to stop: one purchase, 50 accounts, each with an order for it."""
    apple.script("SHARED", "production", CONSUMABLE)
    service.test_clock["now"] = MERCURY_BOUGHT - 1000  # every order created just before the purchase
    orders = {}
    for i in range(50):
        status, body = post(front + "/orders", {"user_id": f"u{i}", "product_id": MERCURY_ID})
        assert status == 201
        orders[body["order_id"]] = f"u{i}"
    service.test_clock["now"] = NOW

    results = concurrently(50, lambda i: post(front + "/receipts", {"user_id": f"u{i}", "receipt": signed_receipt("SHARED")}))

    # The first account to submit the receipt owns its purchases; every other one is refused
    # (and gets nothing of it: not the delivery, not the subscription, not an order paid).
    winners = [i for i, (code, _) in enumerate(results) if code == 200]
    assert len(winners) == 1 and results[winners[0]][1]["delivered"] == [MERCURY]
    assert results[winners[0]][1]["paid"] and list(results[winners[0]][1]["paid"].values()) == [MERCURY]
    assert all((code, body["verdict"]) == (403, "owned_by_another_user")
               for i, (code, body) in enumerate(results) if i != winners[0])
    [order] = paid(service.ledger)
    assert order["transaction_id"] == MERCURY and order["user_id"] == f"u{winners[0]}"
    assert [d["transaction_id"] for d in service.ledger.deliveries()] == [MERCURY]
    assert len(service.ledger.orders()) == 50
    assert {service.entitlements(f"u{i}")["entitlements"][0]["active"] for i in range(50) if i != winners[0]} == {False}


def test_one_user_with_50_orders_and_50_submissions_pays_one_order(service, apple, front):
    apple.script("R", "production", CONSUMABLE)
    order_ids = []
    for i in range(50):  # distinct creation times: the oldest order is the one the library pays
        service.test_clock["now"] = MERCURY_BOUGHT - 100_000 + i
        status, body = post(front + "/orders", {"user_id": "u1", "product_id": MERCURY_ID})
        assert status == 201
        order_ids.append(body["order_id"])
    service.test_clock["now"] = NOW

    results = concurrently(50, lambda i: post(front + "/receipts", {"user_id": "u1", "receipt": signed_receipt("R")}))

    assert [code for code, _ in results] == [200] * 50, results[:3]
    assert sorted(t for _, body in results for t in body["delivered"]) == [MERCURY]
    assert [p for _, body in results for p in body["paid"].items()] == [(order_ids[0], MERCURY)]
    assert [(o["order_id"], o["transaction_id"]) for o in paid(service.ledger)] == [(order_ids[0], MERCURY)]
    assert sum(o["status"] == "pending" for o in service.ledger.orders()) == 49


def test_a_subscription_purchase_pays_one_order_without_a_delivery(service, apple, front):
    """A subscription is not in to_deliver, so no delivery insert guards it: the unique index on
    orders.transaction_id does, and the ids of paid orders go back to the library as used."""
    apple.script("SUB", "production", CONSUMABLE)
    service.test_clock["now"] = MARS_LATEST_BOUGHT - 1000
    for i in range(3):
        assert post(front + "/orders", {"user_id": f"s{i % 2}", "product_id": "com.test.app.mars"})[0] == 201
    service.test_clock["now"] = NOW

    results = concurrently(50, lambda i: post(front + "/receipts", {"user_id": f"s{i % 2}", "receipt": signed_receipt("SUB")}))

    owner = next(body for code, body in results if code == 200)   # s0 or s1, whoever came first
    assert sorted(code for code, _ in results) == [200] * 25 + [403] * 25
    assert [t for code, body in results if code == 200 for t in body["paid"].values()] == [MARS_LATEST]
    assert owner["entitlements"] == {"premium": True}
    assert [o["transaction_id"] for o in paid(service.ledger)] == [MARS_LATEST]
    assert [d["transaction_id"] for d in service.ledger.deliveries()] == [MERCURY]  # the consumable, once


def test_the_database_refuses_one_transaction_for_two_orders(ledger):
    ledger.create_order("o1", "u1", MERCURY_ID, NOW)
    ledger.create_order("o2", "u2", MERCURY_ID, NOW)
    with ledger.transaction() as db:
        assert db.execute("UPDATE orders SET status = 'paid', transaction_id = ? WHERE order_id = 'o1'", (MERCURY,)) == 1
    with pytest.raises(Exception) as refused:
        with ledger.transaction() as db:
            db.execute("UPDATE orders SET status = 'paid', transaction_id = ? WHERE order_id = 'o2'", (MERCURY,))
    assert "unique" in str(refused.value).lower()
    assert ledger.order("o2") == {"status": "pending", "transaction_id": None}
