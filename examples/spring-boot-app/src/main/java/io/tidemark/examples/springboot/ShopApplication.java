package io.tidemark.examples.springboot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A shop's items service with Tidemark: every change of {@code public.items} reaches the {@link AuditLog} destination
 * (and any other destination in application.yml), and its history records who made it and why.
 */
@SpringBootApplication
public class ShopApplication {

    public static void main(String[] args) {
        SpringApplication.run(ShopApplication.class, args);
    }
}
