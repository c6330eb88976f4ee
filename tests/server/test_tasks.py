"""``server.tasks.stop_task``: a task that swallows a cancellation is stopped all the
same, and whoever waits for it can still be cancelled itself."""

from __future__ import annotations

import asyncio

import pytest

from server.tasks import stop_task


@pytest.mark.asyncio
async def test_a_task_that_swallows_its_cancellation_is_stopped_all_the_same() -> None:
    # The node's beat, inside a Redis call that took the cancellation as its own and went on:
    # awaited once after one cancel, the node's close waited a minute.
    swallowed = 0

    async def beat_forever() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                if swallowed == 0:
                    swallowed += 1
                    continue  # the first one is lost
                raise

    task = asyncio.create_task(beat_forever())
    await asyncio.sleep(0)
    await stop_task(task)
    assert task.cancelled() and swallowed == 1


@pytest.mark.asyncio
async def test_the_callers_own_cancellation_is_the_callers() -> None:
    stop = False

    async def stubborn() -> None:
        while not stop:
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                continue  # never ends while cancelled

    task = asyncio.create_task(stubborn())
    waiter = asyncio.create_task(stop_task(task))
    await asyncio.sleep(0.3)  # (several rounds of cancelling)
    assert not waiter.done()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    stop = True
    await asyncio.wait({task}, timeout=5)
    assert task.done()


@pytest.mark.asyncio
async def test_an_error_the_task_ends_with_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fails_as_it_stops() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            raise RuntimeError("the connection broke as it closed") from None

    task = asyncio.create_task(fails_as_it_stops(), name="sender")
    await asyncio.sleep(0)
    await stop_task(task)
    assert task.done() and not task.cancelled()
    assert "task sender ended with an error as it stopped" in caplog.text
    assert "the connection broke as it closed" in caplog.text
