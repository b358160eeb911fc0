package io.tidemark.sync.internal.engine;

import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/** An in-memory store a test can override one method of. */
class ForwardingWatermarkStore implements WatermarkStore {

    private final WatermarkStore delegate = InMemoryWatermarkStore.create();

    @Override
    public Optional<WatermarkState> load(String objectName) {
        return delegate.load(objectName);
    }

    @Override
    public Map<String, WatermarkState> loadAll() {
        return delegate.loadAll();
    }

    @Override
    public void advance(String objectName, String source, OptionalLong expected, long newVersion,
                        List<PositionAdvance> positions, Instant at) {
        delegate.advance(objectName, source, expected, newVersion, positions, at);
    }

    @Override
    public void setDestinationPaused(String objectName, String destination, boolean paused, Instant at) {
        delegate.setDestinationPaused(objectName, destination, paused, at);
    }

    @Override
    public void adoptSource(String objectName, String source, Instant at) {
        delegate.adoptSource(objectName, source, at);
    }

    @Override
    public void recordPoll(String objectName, Instant at, String error) {
        delegate.recordPoll(objectName, at, error);
    }

    @Override
    public void setPaused(String objectName, boolean paused, Instant at) {
        delegate.setPaused(objectName, paused, at);
    }

    @Override
    public void reset(String objectName, Instant at) {
        delegate.reset(objectName, at);
    }
}
