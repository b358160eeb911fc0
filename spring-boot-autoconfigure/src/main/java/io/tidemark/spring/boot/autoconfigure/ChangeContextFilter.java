package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.history.ChangeContext;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.Principal;

/**
 * Binds each web request's {@link ChangeContext} for the length of the request: who (the authenticated principal's
 * name, from {@link HttpServletRequest#getUserPrincipal()}, which Spring Security fills when it is there) and why
 * (the reason header; a correlation-id header too). The history triggers then record them with every change the
 * request makes, sent by {@code ContextualDataSource} together with the statements: no extra round trip.
 *
 * <p>A request without a principal or headers runs with the context bound before (usually none).
 */
public final class ChangeContextFilter extends OncePerRequestFilter {

    private final String reasonHeader;
    private final String correlationIdHeader;

    public ChangeContextFilter(String reasonHeader, String correlationIdHeader) {
        this.reasonHeader = reasonHeader;
        this.correlationIdHeader = correlationIdHeader;
    }

    /** The request's context: the principal's name, the reason and correlation-id headers; absent ones empty. */
    public ChangeContext contextOf(HttpServletRequest request) {
        Principal principal = request.getUserPrincipal();
        return ChangeContext.builder()
                .changedBy(principal == null ? null : principal.getName())
                .reason(header(request, reasonHeader))
                .correlationId(header(request, correlationIdHeader))
                .build();
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        ChangeContext context = contextOf(request);
        if (context.isEmpty()) {
            chain.doFilter(request, response);
            return;
        }
        try {
            ChangeContext.runWith(context, () -> {
                try {
                    chain.doFilter(request, response);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (ServletException e) {
                    throw new ServletFailure(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        } catch (ServletFailure e) {
            throw e.failure;
        }
    }

    private static String header(HttpServletRequest request, String name) {
        if (name == null || name.isBlank()) {
            return null;
        }
        String value = request.getHeader(name);
        return value == null || value.isBlank() ? null : value;
    }

    /** Carries a ServletException through {@link ChangeContext#runWith}, which takes a Runnable. */
    private static final class ServletFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient ServletException failure;

        ServletFailure(ServletException failure) {
            super(failure);
            this.failure = failure;
        }
    }
}
