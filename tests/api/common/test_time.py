from api.common import Duration, Instant, Time


def test_time():
    assert Time.seconds(3) == Time.milliseconds(3000)
    assert str(Time.seconds(3)) == '3000 ms'
    assert Time.days(1).to_milliseconds() == 86_400_000
    assert Time.hours(1) == Time.minutes(60)


def test_duration():
    assert Duration.of_seconds(3) == Duration.of_millis(3000)
    assert Duration.of_days(1) == Duration.of_hours(24) == Duration.of_minutes(1440)
    assert Duration.of_nanos(1_999_999).to_milliseconds() == 1
    assert Duration.of_nanos(-1).to_milliseconds() == -1
    assert Duration.of_minutes(2).to_milliseconds() == 120_000


def test_instant():
    instant = Instant.of_epoch_milli(-1)
    assert (instant.seconds, instant.nanos) == (-1, 999_000_000)
    assert instant.to_epoch_milli() == -1
    assert repr(Instant.of_epoch_milli(1577934896123)) == 'Instant<1577934896, 123000000>'
    assert Instant(1, 5) == Instant(1, 5) != Instant(1, 6)
